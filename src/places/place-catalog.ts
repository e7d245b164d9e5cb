/**
 * Word lists and real cities the place generator draws from. Coordinates are city centres (WGS 84);
 * `spreadKm` is the standard deviation of the scatter around them (bigger cities spread further).
 */
export interface City {
  name: string;
  state: string;
  country: string;
  countryCode: string;
  lat: number;
  lon: number;
  spreadKm: number;
  phonePrefix: string;
  /** `#` is replaced by a digit. */
  zipPattern: string;
  language: string;
  streets: readonly string[];
}

const city = (
  name: string, state: string, country: string, countryCode: string, lat: number, lon: number, spreadKm: number,
  phonePrefix: string, zipPattern: string, language: string, streets: readonly string[],
): City => ({ name, state, country, countryCode, lat, lon, spreadKm, phonePrefix, zipPattern, language, streets });

const EN_STREETS = ['Main Street', 'High Street', 'Park Avenue', 'Church Road', 'Station Road', 'Market Street', 'King Street', 'Queen Street', 'Elm Street', 'Oak Avenue', 'Mill Lane', 'Bridge Street', 'Victoria Road', 'Water Street', 'Chapel Street', 'Broadway', 'Maple Avenue', 'Lake Drive'];
const DE_STREETS = ['Hauptstraße', 'Bahnhofstraße', 'Schillerstraße', 'Goethestraße', 'Gartenstraße', 'Lindenallee', 'Marktplatz', 'Kirchgasse', 'Bergstraße', 'Friedrichstraße', 'Mozartstraße', 'Rosenweg'];
const FR_STREETS = ['Rue de la République', 'Rue Victor Hugo', 'Avenue Jean Jaurès', 'Rue du Moulin', 'Boulevard Pasteur', 'Rue de la Paix', 'Place du Marché', 'Rue des Lilas', 'Rue Saint-Jacques', 'Avenue Foch'];
const ES_STREETS = ['Calle Mayor', 'Calle Real', 'Avenida de la Constitución', 'Calle del Sol', 'Plaza Mayor', 'Calle de Alcalá', 'Paseo del Prado', 'Calle Nueva', 'Gran Vía', 'Calle de la Luna'];
const IT_STREETS = ['Via Roma', 'Via Garibaldi', 'Corso Vittorio Emanuele', 'Via Dante', 'Piazza del Duomo', 'Via Mazzini', 'Via Cavour', 'Via Verdi', 'Corso Italia'];
const NL_STREETS = ['Kerkstraat', 'Dorpsstraat', 'Molenweg', 'Stationsweg', 'Prinsengracht', 'Herengracht', 'Nieuwstraat', 'Marktplein'];
const PT_STREETS = ['Rua Augusta', 'Avenida da Liberdade', 'Rua do Carmo', 'Rua da Prata', 'Avenida Paulista', 'Rua das Flores', 'Rua Direita'];
const JA_STREETS = ['Chuo-dori', 'Omotesando', 'Meiji-dori', 'Yasukuni-dori', 'Sakura-dori', 'Hommachi', 'Ekimae'];
const GENERIC_STREETS = ['Central Avenue', 'Harbour Road', 'Garden Street', 'Market Road', 'Riverside Drive', 'Station Avenue', 'Temple Road', 'Palm Street'];

export const CITIES: readonly City[] = [
  city('New York', 'NY', 'United States', 'US', 40.7128, -74.006, 6, '+1 212', '100##', 'en', EN_STREETS),
  city('Los Angeles', 'CA', 'United States', 'US', 34.0522, -118.2437, 9, '+1 213', '900##', 'en', EN_STREETS),
  city('Chicago', 'IL', 'United States', 'US', 41.8781, -87.6298, 7, '+1 312', '606##', 'en', EN_STREETS),
  city('San Francisco', 'CA', 'United States', 'US', 37.7749, -122.4194, 4, '+1 415', '941##', 'en', EN_STREETS),
  city('Seattle', 'WA', 'United States', 'US', 47.6062, -122.3321, 5, '+1 206', '981##', 'en', EN_STREETS),
  city('Austin', 'TX', 'United States', 'US', 30.2672, -97.7431, 5, '+1 512', '787##', 'en', EN_STREETS),
  city('Miami', 'FL', 'United States', 'US', 25.7617, -80.1918, 5, '+1 305', '331##', 'en', EN_STREETS),
  city('Boston', 'MA', 'United States', 'US', 42.3601, -71.0589, 4, '+1 617', '021##', 'en', EN_STREETS),
  city('Toronto', 'ON', 'Canada', 'CA', 43.6532, -79.3832, 6, '+1 416', 'M5V #A#', 'en', EN_STREETS),
  city('Vancouver', 'BC', 'Canada', 'CA', 49.2827, -123.1207, 4, '+1 604', 'V6B #A#', 'en', EN_STREETS),
  city('Mexico City', 'CDMX', 'Mexico', 'MX', 19.4326, -99.1332, 8, '+52 55', '06###', 'es', ES_STREETS),
  city('São Paulo', 'SP', 'Brazil', 'BR', -23.5505, -46.6333, 9, '+55 11', '01###-###', 'pt', PT_STREETS),
  city('Rio de Janeiro', 'RJ', 'Brazil', 'BR', -22.9068, -43.1729, 7, '+55 21', '20###-###', 'pt', PT_STREETS),
  city('Buenos Aires', 'CABA', 'Argentina', 'AR', -34.6037, -58.3816, 7, '+54 11', 'C1###', 'es', ES_STREETS),
  city('London', 'England', 'United Kingdom', 'GB', 51.5074, -0.1278, 8, '+44 20', 'EC#A #BB', 'en', EN_STREETS),
  city('Manchester', 'England', 'United Kingdom', 'GB', 53.4808, -2.2426, 4, '+44 161', 'M# #AB', 'en', EN_STREETS),
  city('Dublin', 'Leinster', 'Ireland', 'IE', 53.3498, -6.2603, 4, '+353 1', 'D0#', 'en', EN_STREETS),
  city('Paris', 'Île-de-France', 'France', 'FR', 48.8566, 2.3522, 5, '+33 1', '750##', 'fr', FR_STREETS),
  city('Lyon', 'Auvergne-Rhône-Alpes', 'France', 'FR', 45.764, 4.8357, 4, '+33 4', '6900#', 'fr', FR_STREETS),
  city('Berlin', 'Berlin', 'Germany', 'DE', 52.52, 13.405, 7, '+49 30', '10###', 'de', DE_STREETS),
  city('Munich', 'Bavaria', 'Germany', 'DE', 48.1351, 11.582, 5, '+49 89', '80###', 'de', DE_STREETS),
  city('Hamburg', 'Hamburg', 'Germany', 'DE', 53.5511, 9.9937, 6, '+49 40', '20###', 'de', DE_STREETS),
  city('Vienna', 'Vienna', 'Austria', 'AT', 48.2082, 16.3738, 5, '+43 1', '1###', 'de', DE_STREETS),
  city('Zurich', 'Zurich', 'Switzerland', 'CH', 47.3769, 8.5417, 3, '+41 44', '80##', 'de', DE_STREETS),
  city('Amsterdam', 'North Holland', 'Netherlands', 'NL', 52.3676, 4.9041, 4, '+31 20', '10## AB', 'nl', NL_STREETS),
  city('Madrid', 'Community of Madrid', 'Spain', 'ES', 40.4168, -3.7038, 6, '+34 91', '280##', 'es', ES_STREETS),
  city('Barcelona', 'Catalonia', 'Spain', 'ES', 41.3851, 2.1734, 5, '+34 93', '080##', 'es', ES_STREETS),
  city('Lisbon', 'Lisbon', 'Portugal', 'PT', 38.7223, -9.1393, 4, '+351 21', '1###-###', 'pt', PT_STREETS),
  city('Rome', 'Lazio', 'Italy', 'IT', 41.9028, 12.4964, 6, '+39 06', '001##', 'it', IT_STREETS),
  city('Milan', 'Lombardy', 'Italy', 'IT', 45.4642, 9.19, 5, '+39 02', '201##', 'it', IT_STREETS),
  city('Stockholm', 'Stockholm County', 'Sweden', 'SE', 59.3293, 18.0686, 5, '+46 8', '1## ##', 'en', GENERIC_STREETS),
  city('Warsaw', 'Masovia', 'Poland', 'PL', 52.2297, 21.0122, 6, '+48 22', '00-###', 'en', GENERIC_STREETS),
  city('Istanbul', 'Istanbul', 'Turkey', 'TR', 41.0082, 28.9784, 9, '+90 212', '34###', 'en', GENERIC_STREETS),
  city('Cairo', 'Cairo Governorate', 'Egypt', 'EG', 30.0444, 31.2357, 8, '+20 2', '11###', 'en', GENERIC_STREETS),
  city('Nairobi', 'Nairobi County', 'Kenya', 'KE', -1.2921, 36.8219, 6, '+254 20', '00###', 'en', GENERIC_STREETS),
  city('Cape Town', 'Western Cape', 'South Africa', 'ZA', -33.9249, 18.4241, 6, '+27 21', '80##', 'en', EN_STREETS),
  city('Dubai', 'Dubai', 'United Arab Emirates', 'AE', 25.2048, 55.2708, 8, '+971 4', '#####', 'en', GENERIC_STREETS),
  city('Mumbai', 'Maharashtra', 'India', 'IN', 19.076, 72.8777, 8, '+91 22', '4000##', 'en', GENERIC_STREETS),
  city('Bangalore', 'Karnataka', 'India', 'IN', 12.9716, 77.5946, 7, '+91 80', '5600##', 'en', GENERIC_STREETS),
  city('Singapore', 'Singapore', 'Singapore', 'SG', 1.3521, 103.8198, 6, '+65', '0#####', 'en', GENERIC_STREETS),
  city('Bangkok', 'Bangkok', 'Thailand', 'TH', 13.7563, 100.5018, 8, '+66 2', '10###', 'en', GENERIC_STREETS),
  city('Tokyo', 'Tokyo', 'Japan', 'JP', 35.6762, 139.6503, 9, '+81 3', '1##-####', 'ja', JA_STREETS),
  city('Osaka', 'Osaka', 'Japan', 'JP', 34.6937, 135.5023, 6, '+81 6', '5##-####', 'ja', JA_STREETS),
  city('Seoul', 'Seoul', 'South Korea', 'KR', 37.5665, 126.978, 8, '+82 2', '0####', 'en', GENERIC_STREETS),
  city('Sydney', 'NSW', 'Australia', 'AU', -33.8688, 151.2093, 8, '+61 2', '20##', 'en', EN_STREETS),
  city('Melbourne', 'VIC', 'Australia', 'AU', -37.8136, 144.9631, 7, '+61 3', '30##', 'en', EN_STREETS),
  city('Auckland', 'Auckland', 'New Zealand', 'NZ', -36.8485, 174.7633, 5, '+64 9', '10##', 'en', EN_STREETS),
];

export interface Category {
  category: string;
  subCategories: readonly string[];
  nouns: readonly string[];
  services: readonly string[];
  priceRanges: readonly string[];
  /** Typical opening [hour, closing hour]; closing may pass 24 (past midnight). */
  hours: readonly (readonly [number, number])[];
  /** Probability of being closed on Monday. */
  mondayClosed: number;
}

export const CATEGORIES: readonly Category[] = [
  { category: 'Food & Drink', subCategories: ['Restaurant', 'Bistro', 'Pizzeria', 'Sushi Bar', 'Steakhouse', 'Vegan Restaurant', 'Trattoria'], nouns: ['Kitchen', 'Table', 'Bistro', 'Grill', 'Trattoria', 'House', 'Eatery'], services: ['dine-in', 'takeaway', 'delivery', 'reservations', 'catering', 'outdoor seating'], priceRanges: ['$', '$$', '$$$', '$$$$'], hours: [[11, 22], [12, 23], [17, 24], [11, 21]], mondayClosed: 0.3 },
  { category: 'Food & Drink', subCategories: ['Café', 'Coffee Shop', 'Bakery', 'Tea Room'], nouns: ['Café', 'Coffee', 'Bakery', 'Roasters', 'Corner'], services: ['coffee', 'breakfast', 'takeaway', 'wifi', 'pastries'], priceRanges: ['$', '$$'], hours: [[7, 18], [6, 16], [8, 20]], mondayClosed: 0.1 },
  { category: 'Nightlife', subCategories: ['Bar', 'Pub', 'Cocktail Bar', 'Wine Bar', 'Brewery'], nouns: ['Bar', 'Tavern', 'Pub', 'Lounge', 'Taproom'], services: ['drinks', 'live music', 'happy hour', 'sports screening', 'craft beer'], priceRanges: ['$$', '$$$'], hours: [[16, 26], [18, 27], [12, 24]], mondayClosed: 0.4 },
  { category: 'Shopping', subCategories: ['Bookstore', 'Clothing Store', 'Florist', 'Grocery', 'Bike Shop', 'Record Store'], nouns: ['Store', 'Market', 'Shop', 'Emporium', 'Boutique', 'Outfitters'], services: ['retail', 'gift wrapping', 'click and collect', 'repairs', 'home delivery'], priceRanges: ['$', '$$', '$$$'], hours: [[9, 19], [10, 20], [10, 18]], mondayClosed: 0.1 },
  { category: 'Health & Fitness', subCategories: ['Gym', 'Yoga Studio', 'Climbing Gym', 'Pharmacy', 'Physiotherapy'], nouns: ['Studio', 'Gym', 'Club', 'Centre', 'Clinic'], services: ['personal training', 'classes', 'sauna', 'consultations', 'memberships'], priceRanges: ['$$', '$$$'], hours: [[6, 22], [7, 21], [8, 20]], mondayClosed: 0 },
  { category: 'Arts & Culture', subCategories: ['Museum', 'Gallery', 'Theatre', 'Cinema', 'Library'], nouns: ['Gallery', 'Museum', 'Theatre', 'Hall', 'Collective', 'Arts Centre'], services: ['exhibitions', 'guided tours', 'workshops', 'tickets', 'events'], priceRanges: ['$', '$$'], hours: [[10, 18], [9, 17], [12, 22]], mondayClosed: 0.7 },
  { category: 'Services', subCategories: ['Hair Salon', 'Laundry', 'Repair Shop', 'Co-working Space', 'Car Wash', 'Tailor'], nouns: ['Works', 'Services', 'Studio', 'Lab', 'Hub', 'Workshop'], services: ['appointments', 'walk-ins', 'repairs', 'pick-up', 'consultations'], priceRanges: ['$', '$$', '$$$'], hours: [[9, 18], [8, 17], [10, 19]], mondayClosed: 0.2 },
  { category: 'Outdoors', subCategories: ['Park', 'Garden', 'Playground', 'Beach', 'Viewpoint', 'Campground'], nouns: ['Park', 'Gardens', 'Green', 'Grounds', 'Point', 'Fields'], services: ['picnic area', 'guided walks', 'bike rental', 'restrooms', 'parking'], priceRanges: ['$'], hours: [[6, 21], [7, 20], [0, 24]], mondayClosed: 0 },
  { category: 'Lodging', subCategories: ['Hotel', 'Hostel', 'Guest House', 'Bed & Breakfast'], nouns: ['Hotel', 'Inn', 'Lodge', 'Suites', 'Hostel', 'Residence'], services: ['rooms', 'breakfast', 'concierge', 'airport shuttle', 'wifi', 'parking'], priceRanges: ['$$', '$$$', '$$$$'], hours: [[0, 24]], mondayClosed: 0 },
];

export const ADJECTIVES = ['Golden', 'Blue', 'Little', 'Grand', 'Old', 'Happy', 'Silver', 'Green', 'Red', 'Royal', 'Hidden', 'Lucky', 'Wild', 'Quiet', 'Urban', 'Sunny', 'Northern', 'Crimson', 'Velvet', 'Copper', 'Iron', 'Secret', 'Bright', 'Rustic', 'Modern', 'Twin', 'Black', 'White', 'Open', 'Corner'];
export const NOUNS = ['Oak', 'Fox', 'Lantern', 'Anchor', 'Sparrow', 'River', 'Harbor', 'Garden', 'Bridge', 'Lion', 'Bear', 'Owl', 'Moon', 'Star', 'Tree', 'Stone', 'Mill', 'Crown', 'Bell', 'Whale', 'Pine', 'Meadow', 'Falcon', 'Compass', 'Tide', 'Orchard', 'Feather', 'Rose', 'Wolf', 'Hill'];
export const FAMILY_NAMES = ['Smith', 'Garcia', 'Müller', 'Rossi', 'Martin', 'Silva', 'Tanaka', 'Kim', 'Novak', 'Jensen', 'Dubois', 'Kowalski', 'Oliveira', 'Nguyen', 'Patel', 'Haddad', "O'Brien", 'Schmidt', 'Fernández', 'Ivanova'];
export const FIRST_NAMES = ['Anna', 'Liam', 'Sofia', 'Noah', 'Mia', 'Lucas', 'Emma', 'Mateo', 'Yuki', 'Aarav', 'Chloé', 'Jonas', 'Amara', 'Leo', 'Ines', 'Omar', 'Hana', 'Felix', 'Zoe', 'Ravi'];

export const CHARACTERISTICS = ['family-friendly', 'wheelchair accessible', 'dog-friendly', 'cozy', 'trendy', 'quiet', 'lively', 'romantic', 'historic', 'eco-friendly', 'budget', 'luxury', 'local favourite', 'hidden gem', 'great views', 'late night', 'student hangout', 'kid-friendly', 'LGBTQ+ friendly', 'free wifi'];

export const REVIEW_OPENINGS = ['Absolutely loved it.', 'Solid experience overall.', 'Not bad, not great.', 'A real hidden gem.', 'Came here on a friend\'s recommendation.', 'Disappointing this time.', 'Our new favourite spot!', 'Worth the detour.', 'Great value for money.', 'Would not come back.'];
export const REVIEW_DETAILS = ['The staff were friendly and quick.', 'It was a bit crowded on the weekend.', 'Prices are fair for the area.', 'Lovely atmosphere, especially in the evening.', 'Service was slow but kind.', 'Clean, bright and well organised.', 'Parking nearby is difficult.', 'Everything we tried was excellent.', 'Music was a little too loud for us.', 'They even remembered our names.', 'Easy to reach by public transport.', 'The place could use some renovation.'];

export const DESCRIPTION_TEMPLATES = [
  'A {adj} {sub} in the heart of {city}, known for its {svc}.',
  '{name} is a {adj} {sub} near {street}, offering {svc}.',
  'Locals love this {sub} for its {svc} and {char} atmosphere.',
  'Family-run {sub} in {city} since {year}, with {svc}.',
  'A {char} {sub} on {street}: {svc} and a warm welcome.',
];
